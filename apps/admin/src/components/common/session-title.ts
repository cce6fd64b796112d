/**
 * What a session is called on every page: its title, or for an untitled one when it was
 * created (a UUID means nothing to a reader; the full id is on the session page, copyable).
 */
export function sessionTitle(session: { title: string | null; createdAt: Date }): string {
  return session.title ?? `Untitled session of ${session.createdAt.toLocaleString()}`;
}
