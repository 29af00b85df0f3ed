'use strict'
// Runs one file of the bundle (dist/*.code.cjs) with the V8 code cache the build made for it, so that a cold `dsh`
// neither parses nor lazily compiles what the build's own runs already compiled
// (docs/decisions/2026-12-01-code-cache.md). Every dist/*.cjs of the bundle is a two-line stub that calls load();
// the code beside it runs as the stub's module, with the stub's require, so that nothing else changes.
//
// Node 20 has no module compile cache (module.enableCompileCache() is Node 22), hence vm.Script and its
// cachedData. A cache is used only when it was made from the code file as it is now: its size and the content id
// the build wrote into the stub are stamped in front (not the mtime: npm pack gives every file one fixed time, so
// an installed copy keeps its caches). V8 rejects one made by another Node; either way the code compiles as usual.
const { readFileSync, statSync, writeFileSync } = require('node:fs')
const { dirname } = require('node:path')
const vm = require('node:vm')

/** Set by the build (scripts/bundle.mjs) for its training runs: write the caches when the process exits. */
const training = process.env.DSH_BUILD_CODE_CACHE === '1'
const made = []

// Node 20 loses a script's dynamic-import callback when V8 takes its code from a cache ("A dynamic import callback
// was not specified"), so the bundle calls this function instead of import() (the build rewrites the one module
// that imports: the packaged ripgrep, an ES module). Here, in a module Node compiled, import() works. A bare
// specifier resolves from bin/ instead of dist/: the same node_modules, since both are folders of this package.
const importModule = (specifier) => import(specifier)

/** `id`: the content id of the code file, written into the stub by the build; a stub without one stamps the mtime. */
exports.load = function load(module, stubRequire, stub, id) {
  const file = stub.replace(/\.cjs$/, '.code.cjs')
  const { size, mtimeMs } = statSync(file)
  const stamp = Buffer.concat([
    Buffer.from(new Float64Array([size]).buffer),
    id === undefined ? Buffer.from(new Float64Array([mtimeMs]).buffer) : Buffer.from(id, 'hex'),
  ])
  const cacheFile = `${file}.v8`
  // A shebang line is no JavaScript inside the wrapper: blank it, keeping line numbers for stack traces.
  const source = readFileSync(file, 'utf8').replace(/^#!.*/, '')
  const wrapped = `(function (exports, require, module, __filename, __dirname, __dshImport) {${source}\n})`
  const script = new vm.Script(wrapped, { filename: file, cachedData: cached(cacheFile, stamp) })
  if (training) made.push({ script, cacheFile, stamp })
  script.runInThisContext().call(module.exports, module.exports, stubRequire, module, file, dirname(file), importModule)
}

/** The cache made from this very code file, else undefined. */
function cached(cacheFile, stamp) {
  let data
  try {
    data = readFileSync(cacheFile)
  } catch {
    return undefined
  }
  return data.length > stamp.length && data.subarray(0, stamp.length).equals(stamp)
    ? data.subarray(stamp.length)
    : undefined
}

if (training) {
  process.on('exit', () => {
    for (const { script, cacheFile, stamp } of made)
      writeFileSync(cacheFile, Buffer.concat([stamp, script.createCachedData()]))
  })
}
