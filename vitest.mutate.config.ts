import { defineConfig } from 'vitest/config';

// The tests Stryker runs against each mutant (npm run mutate): only tests that run in Node and
// import the sources, since a mutant lives in this process's modules. Tests that spawn the
// daemon's dist/ build, drive Chromium or run inside workerd never reach it. Stryker runs them
// in worker threads, where vi.stubEnv('HOME') does not move os.homedir(): the self-protection
// tests on a made-up home (selfProtectionFileTools, selfProtectionMcp) cannot run here.
export default defineConfig({
  test: {
    include: [
      'tests/shared/**/*.test.ts',
      'tests/daemon/auditChain.test.ts',
      'tests/daemon/commandCorpus.test.ts',
      'tests/daemon/commandMatching.test.ts',
      'tests/daemon/freezeStateUpgrade.test.ts',
      'tests/daemon/killSwitchFreezes.test.ts',
      'tests/daemon/killSwitchVotes.test.ts',
      'tests/daemon/policyProperties.test.ts',
      'tests/daemon/scanSimpleCommand.test.ts',
      'tests/daemon/selfProtectionEnvironment.test.ts',
      'tests/daemon/terminalQr.test.ts',
      'tests/daemon/units.test.ts',
    ],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
