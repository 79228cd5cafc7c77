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

if (typeof Module.registerHooks === 'function') {
  Module.registerHooks({
    resolve (specifier, context, next) {
      const source = fromExample(context.parentURL) ? sources.get(specifier) : undefined
      return source === undefined ? next(specifier, context) : { url: pathToFileURL(source).href, shortCircuit: true }
    }
  })
} else {
  // Node before 22.15 has no synchronous hooks; the examples are CommonJS, so require's resolver is enough.
  const resolveFilename = Module._resolveFilename
  Module._resolveFilename = function (request, parent, ...rest) {
    const source = fromExample(parent?.filename && pathToFileURL(parent.filename).href) ? sources.get(request) : undefined
    return resolveFilename.call(this, source ?? request, parent, ...rest)
  }
}
