/** One line of `latch doctor`: `✓ name: detail`, or `✗ name: detail` and how to fix it. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}
