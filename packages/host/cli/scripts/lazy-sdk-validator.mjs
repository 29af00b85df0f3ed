// The MCP SDK's Server builds an ajv instance (with ajv-formats) in its constructor, only to check elicitation
// answers, which dsh never requests; importing and building it is about a tenth of `dsh mcp`'s start. In the
// bundle, its provider requires ajv (from node_modules: hence the package's ajv and ajv-formats dependencies) and
// builds it on first use instead. The rewrite must match exactly, or the build fails.
export const SDK_AJV_PROVIDER =
  /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]esm[\\/]validation[\\/]ajv-provider\.js$/
export const lazySdkValidator = {
  name: 'dsh-lazy-sdk-validator',
  transform(code, id) {
    if (!SDK_AJV_PROVIDER.test(id)) return null
    const rewrites = [
      [
        "import Ajv from 'ajv';\nimport _addFormats from 'ajv-formats';\n",
        "import { createRequire } from 'node:module';\n",
      ],
      [
        '    const ajv = new Ajv({',
        "    const require = createRequire(import.meta.url);\n    const Ajv = require('ajv').default;\n    const _addFormats = require('ajv-formats').default;\n    const ajv = new Ajv({",
      ],
      [
        '        this._ajv = ajv ?? createDefaultAjvInstance();',
        '        this._given = ajv;\n    }\n    get _ajv() {\n        return (this._built ??= this._given ?? createDefaultAjvInstance());',
      ],
    ]
    for (const [from, to] of rewrites) {
      if (!code.includes(from))
        throw new Error(`${id} changed: cannot make its ajv lazy (looked for ${JSON.stringify(from)})`)
      code = code.replace(from, to)
    }
    return code
  },
}
