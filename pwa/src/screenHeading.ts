/**
 * Names each screen by its heading: the document's title follows the first `h1` (what the app
 * switcher and a screen reader announce), or its `data-title` where the heading is the agent's
 * text (a request's command), which the browser's history would keep. After a move to another
 * screen the focus goes to that screen's heading once it is shown, so a screen reader reads on
 * from there rather than from wherever the last screen left it.
 */
export function followScreenHeadings(root: HTMLElement): void {
  let headingBefore: Element | null | undefined;
  const follow = () => {
    const heading = root.querySelector('h1');
    if (!heading) return;
    const name = (heading.dataset['title'] ?? heading.textContent!).trim();
    document.title = name && name !== 'Latch' ? `${name} · Latch` : 'Latch';
    if (headingBefore !== undefined && heading !== headingBefore) {
      headingBefore = undefined;
      heading.tabIndex = -1;
      heading.focus();
    }
  };
  new MutationObserver(follow).observe(root, { childList: true, subtree: true, characterData: true });
  // The screen before a move keeps its heading until the next one renders: that one is not focused.
  let path = location.pathname;
  addEventListener('popstate', () => {
    if (location.pathname === path) return;
    path = location.pathname;
    headingBefore = root.querySelector('h1');
  });
  follow();
}
