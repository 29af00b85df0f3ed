#!/usr/bin/env node
// The `dsh` command. A committed plain-JS shim, so that npm can link the bin during `npm ci` (before the
// `prepare` build has produced dist/): the link never points at a file that does not exist yet. It runs the
// bundled entry (docs/decisions/2026-12-01-bundled-cli-entry.md).
import '../dist/dsh.cjs'
