/**
 * The deployed Worker's origin, from the lines wrangler writes to `WRANGLER_OUTPUT_FILE_PATH`
 * (one JSON object a line; a deploy's carries `targets`, the URLs it now answers on), or
 * undefined when it names none (a Worker with workers.dev off and no route).
 */
export function deployedOrigin(outputLines: string): string | undefined {
  for (const line of outputLines.split('\n').reverse()) {
    let entry: { type?: unknown; targets?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (entry.type !== 'deploy' || !Array.isArray(entry.targets)) continue;
    for (const target of entry.targets) {
      // "https://latch-relay.you.workers.dev", "latch.example.com/* (zone name: example.com)"
      const address = typeof target === 'string' ? target.split(/\s/)[0] : undefined;
      if (!address) continue;
      try {
        const url = new URL(address.includes('://') ? address : `https://${address}`);
        if (url.protocol === 'https:' && url.hostname.includes('.')) return url.origin;
      } catch {
        // Not an address: the next target may be one.
      }
    }
  }
  return undefined;
}
