/** Domains reserved for examples and tests (RFC 2606, RFC 6761): nobody reads mail there. */
const PLACEHOLDER = /(^|\.)(example\.(com|net|org)|example|invalid|localhost|test)$/i;

/**
 * Why `subject` cannot be a relay's VAPID subject, or undefined when it can. The push services
 * want a way to reach the relay's operator (RFC 8292, section 2.1): a `mailto:` or an `https:`
 * URL. Apple's answers 403 to a placeholder, and an iPhone then gets no notifications.
 */
export function vapidSubjectProblem(subject: string): string | undefined {
  let host: string;
  if (subject.startsWith('mailto:')) {
    const match = /^mailto:[^@\s/?#]+@([^@\s/?#]+)$/.exec(subject);
    if (!match) return 'a mailto: subject is mailto:you@your.domain';
    host = match[1]!;
  } else if (subject.startsWith('https:')) {
    try {
      host = new URL(subject).hostname;
    } catch {
      return 'an https: subject is a URL of yours';
    }
  } else return 'the subject is a mailto: or an https: URL';
  if (!host.includes('.') || PLACEHOLDER.test(host))
    return `${host} is a placeholder: Apple's push service refuses it, and iPhones then get no notifications`;
  return undefined;
}
