#!/usr/bin/env node
// The `dsh` command. A committed plain-JS shim, so that npm can link the bin during `npm ci` (before the
// `prepare` build has produced dist/): the link never points at a file that does not exist yet. It runs the
// bundled entry (docs/decisions/2026-12-01-bundled-cli-entry.md). CommonJS (bin/package.json), like the bundle:
// an ES module here would start Node's ES module loader, about 7 ms of every cold start.
require('../dist/dsh.cjs')
