'use strict'
// The examples import the plugin by its package name, as a school's copy of them would. Without a build
// that name leads nowhere (package.json's exports point into dist/), so in every test process (.taprc's
// node-arg) an example's import of it resolves to the sources in lib/, as tsc does for the type-check:
// the in-process tier then needs no build, and the examples run against the very modules the tests
// cover. A test's own import of the name (test/exports.test.ts) still gets the built package.
const Module = require('node:module')
const { join } = require('node:path')
const { pathToFileURL } = require('node:url')

const root = join(__dirname, '..', '..')
const lib = join(root, 'lib')
const examples = join(root, 'examples')
const sources = new Map([
  ['fastify-schools-resources', join(lib, 'index.ts')],
  ['fastify-schools-resources/redis', join(lib, 'stores', 'redis', 'index.ts')]
])

function fromExample (parentURL) {
  return typeof parentURL === 'string' && parentURL.startsWith(pathToFileURL(examples).href + '/')
}

// Node 22's synchronous hooks cannot hand an import on to the asynchronous ones tap registers
// (ERR_METHOD_NOT_IMPLEMENTED), so there the examples' require is redirected instead.
const major = Number(process.versions.node.split('.')[0])
if (major >= 23 && typeof Module.registerHooks === 'function') {
  Module.registerHooks({
    resolve (specifier, context, next) {
      const source = fromExample(context.parentURL) ? sources.get(specifier) : undefined
      return source === undefined ? next(specifier, context) : { url: pathToFileURL(source).href, shortCircuit: true }
    }
  })
} else {
  // The examples are CommonJS, so their require is enough. It is patched rather than
  // Module._resolveFilename, which tap's TypeScript loader replaces after this file has run.
  const require = Module.prototype.require
  Module.prototype.require = function (id) {
    const source = fromExample(this.filename && pathToFileURL(this.filename).href) ? sources.get(id) : undefined
    return require.call(this, source ?? id)
  }
}
