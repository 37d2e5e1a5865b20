import { terminalQr } from './terminalQr.ts';

/**
 * What `latch pair --totp` prints for the authenticator app: a line, the code, a line. The URI
 * is at most 78 bytes (fallback/totp.ts), a version-4 code: 23 lines and the cursor's, 80×24.
 */
export function totpScreen(uri: string): string {
  return (
    'Scan this code with your authenticator app (used only when no phone answers):\n' +
    terminalQr(uri) +
    'Set [fallback] mode = "totp" in the config to use it.\n'
  );
}
