import { defineConfig } from 'vitest/config';

// The tests Stryker runs against each mutant (npm run mutate): only tests that run in Node and
// import the sources, since a mutant lives in this process's modules. Tests that spawn the
// daemon's dist/ build, drive Chromium or run inside workerd never reach it.
export default defineConfig({
  test: {
    include: [
      'tests/shared/**/*.test.ts',
      'tests/daemon/auditChain.test.ts',
      'tests/daemon/auditFailedAppend.test.ts',
      'tests/daemon/auditFiles.test.ts',
      'tests/daemon/auditRotation.test.ts',
      'tests/daemon/auditTwoProcesses.test.ts',
      'tests/daemon/auditVerifyEnds.test.ts',
      'tests/daemon/commandCorpus.test.ts',
      'tests/daemon/commandMatching.test.ts',
      'tests/daemon/commandWords.test.ts',
      'tests/daemon/freezeStateUpgrade.test.ts',
      'tests/daemon/guardsOfTheDaemon.test.ts',
      'tests/daemon/killSwitchFreezes.test.ts',
      'tests/daemon/killSwitchVotes.test.ts',
      'tests/daemon/pathPattern.test.ts',
      'tests/daemon/policyKeeper.test.ts',
      'tests/daemon/policyLanguage.test.ts',
      'tests/daemon/policyProperties.test.ts',
      'tests/daemon/policyTightening.test.ts',
      'tests/daemon/scanSimpleCommand.test.ts',
      'tests/daemon/selfProtectionCommands.test.ts',
      'tests/daemon/selfProtectionEnvironment.test.ts',
      'tests/daemon/selfProtectionFileTools.test.ts',
      'tests/daemon/selfProtectionMcp.test.ts',
      'tests/daemon/shellSpans.test.ts',
      'tests/daemon/similarCall.test.ts',
      'tests/daemon/terminalQr.test.ts',
      'tests/daemon/units.test.ts',
      'tests/daemon/wordsTouch.test.ts',
    ],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
