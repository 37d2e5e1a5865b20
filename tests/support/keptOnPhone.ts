import type { Page } from 'playwright-core';

/**
 * What the app keeps in IndexedDB (pwa/src/keystore.ts), each value as JSON, read in the page:
 * what the service worker will read, whatever the screen shows. For a paired phone only (a
 * stranger's page has no store to read).
 */
export function keptOnPhone(page: Page): Promise<Record<string, string>> {
  return page.evaluate(
    () =>
      new Promise<Record<string, string>>((resolve, reject) => {
        const opened = indexedDB.open('latch');
        opened.onerror = () => reject(opened.error);
        opened.onsuccess = () => {
          const store = opened.result.transaction('keys').objectStore('keys');
          const keys = store.getAllKeys();
          const values = store.getAll();
          values.onerror = () => reject(values.error);
          values.onsuccess = () => {
            opened.result.close();
            resolve(
              Object.fromEntries(
                keys.result.map((key, index) => [String(key), JSON.stringify(values.result[index])]),
              ),
            );
          };
        };
      }),
  );
}
