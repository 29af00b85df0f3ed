const { readFileSync, writeFileSync, existsSync } = require('node:fs')
const vm = require('node:vm')
const Module = require('node:module')
const path = require('node:path')
const file = path.join(__dirname, 'dsh.cjs')
const cacheFile = path.join(__dirname, 'dsh.cache')
const source = readFileSync(file, 'utf8').replace(/^#!.*/, '')
const cachedData = existsSync(cacheFile) ? readFileSync(cacheFile) : undefined
const script = new vm.Script(Module.wrap(source), { filename: file, cachedData, importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER })
if (process.env.SHOW) console.error('rejected', script.cachedDataRejected, !!cachedData)
const fn = script.runInThisContext()
const m = { exports: {} }
fn.call(m.exports, m.exports, Module.createRequire(file), m, file, __dirname)
if (process.env.MAKE_CACHE) process.on('exit', () => writeFileSync(cacheFile, script.createCachedData()))
