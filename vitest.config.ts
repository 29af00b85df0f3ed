import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Tests import workspace packages from their TypeScript sources (the "dsh-source" export condition),
  // so a test run never depends on a stale build; host tests that spawn `dsh` use the built output.
  resolve: { conditions: ['dsh-source'] },
  ssr: { resolve: { conditions: ['dsh-source'] } },
  test: {
    // Builds dsh if the tree changed since its last build (never after `npm test`'s own build): no test file builds.
    // Installs the pinned agent CLIs that tests/clients drives, once, before any test file runs.
    globalSetup: ['tests/build-once.ts', 'tests/clients/setup.ts'],
    include: ['packages/*/*/tests/**/*.test.ts', 'tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})
