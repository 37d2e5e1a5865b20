/** One line of `latch doctor`: `✓ name: detail`, or `✗ name: detail` and how to fix it, or a warning, `! name: detail`. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
  /** It passes, but says what a person should know: `! name: detail`. */
  warning?: true;
}
