/**
 * Run inside a mount namespace where `alias` is a bind mount of `home` (tests/daemon/
 * selfProtectionBindMount.test.ts): prints, as JSON, what self-protection makes of file tools
 * that name Latch's places through the alias.
 */
import { join } from 'node:path';
import { protectedPlaces } from '../../daemon/policy/protectedPlaces.ts';
import { selfProtection } from '../../daemon/policy/selfProtection.ts';

const [home, alias] = process.argv.slice(2) as [string, string];
const places = protectedPlaces({ HOME: home }, 4242);
const judged = (tool: string, path: string) =>
  selfProtection({ tool, paths: [join(alias, path)], cwd: join(home, 'project') }, places)?.rule ?? null;
console.log(
  JSON.stringify({
    readSecret: judged('Read', '.latch/totp.json'),
    writePolicy: judged('Write', '.latch/policy.toml'),
    writeNewFile: judged('Write', '.latch/new.toml'),
    writeHooks: judged('Write', '.claude/settings.json'),
    readProject: judged('Read', 'project/README.md'),
  }),
);
