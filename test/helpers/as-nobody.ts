import { execFileSync } from 'node:child_process'

/** User and group nobody, for a child process that must not read what root can. */
export const NOBODY = { uid: 65534, gid: 65534 }

/**
 * Why user nobody cannot run `script` with the Node at `execPath` here, or undefined when it can: tried,
 * with the same environment (tap's loaders included). It cannot where Node or the project lies under a
 * directory nobody may not enter, as nvm installs Node under root's home. Only root can ask.
 */
export function nobodyCannotRun (execPath: string, script: string): string | undefined {
  try {
    execFileSync(execPath, ['-e', 'require("node:fs").accessSync(process.argv[1], 4)', script], { ...NOBODY, stdio: ['ignore', 'ignore', 'pipe'] })
    return undefined
  } catch (err) {
    const { code, stderr } = err as { code?: string, stderr?: Buffer }
    const said = stderr?.toString().split('\n').find((line) => /EACCES|EPERM|Error/.test(line))?.trim()
    return `user nobody (uid ${NOBODY.uid}) cannot run ${execPath} on ${script} (${code ?? said ?? 'it failed'}): ` +
      'a Node or a clone under a home directory nobody may not enter, as nvm installs it'
  }
}
