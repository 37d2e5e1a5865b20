import type { SimilarCall } from '../messages/approvals.ts';

/** A similar-call rule's command as the phone and `latch policy grants` show it: `git push …`. */
export const similarCommandText = (similar: Pick<SimilarCall, 'words' | 'moreWords'>): string =>
  `${similar.words.join(' ')}${similar.moreWords ? ' …' : ''}`;
