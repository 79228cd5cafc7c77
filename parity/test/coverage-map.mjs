// Each parity test covers the command's own sources, never the plugin's example it runs against.
export default () => ['src/**/*.ts']
