/**
 * When to retry, as the Python client does: on transport errors, on 502/503/504 and on a 409
 * `RequestInProgressError` (the first try with the same key is still running). Commands keep
 * their idempotency key throughout, so a retry of a command that did land returns the first
 * result instead of acting twice.
 */

export interface RetryPolicy {
  /** Tries at most, the first included. */
  readonly attempts: number;
  /** The first wait; doubled after each try, at most `maxBackoffMs`, jittered. */
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  /**
   * No try starts later than this after the first. The default outlasts the server's
   * idempotency lease, so a key left "in progress" by an API process that died is free again
   * before the client gives up.
   */
  readonly totalMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 12,
  backoffMs: 200,
  maxBackoffMs: 2000,
  totalMs: 12000,
};

export const RETRY_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/** The wait before a retry after `attempt` failed tries (jittered to spread a crowd out). */
export function backoffDelay(policy: RetryPolicy, attempt: number): number {
  const base = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** attempt);
  return base * (0.5 + Math.random() / 2);
}

/**
 * How long to wait before try `attempt + 2` (null: give up), `elapsedMs` after the first try
 * started; the server's `Retry-After` replaces the backoff when it sends one.
 */
export function waitBeforeRetry(
  policy: RetryPolicy,
  attempt: number,
  elapsedMs: number,
  retryAfterMs: number | null = null,
): number | null {
  if (attempt + 1 >= policy.attempts) return null;
  const left = policy.totalMs - elapsedMs;
  if (left <= 0) return null;
  const wait = retryAfterMs ?? backoffDelay(policy, attempt);
  return Math.min(wait, left);
}

/** The server's `Retry-After` in milliseconds (this API sends seconds, never dates). */
export function retryAfterOf(response: Response): number | null {
  const raw = response.headers.get("Retry-After");
  if (raw === null) return null;
  const seconds = Number(raw);
  return Number.isFinite(seconds) ? Math.max(0, seconds) * 1000 : null;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
