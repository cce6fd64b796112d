import { errorMessage } from '../trpc';

export function Loading({ what }: { what: string }) {
  return (
    <p className="state" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

export function Empty({ children }: { children: React.ReactNode }) {
  return <p className="state empty">{children}</p>;
}

export function ErrorView({ error }: { error: unknown }) {
  return (
    <p className="state error" role="alert">
      {errorMessage(error)}
    </p>
  );
}
