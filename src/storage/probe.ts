// The liveness probe both back ends answer `ping()` with: `select 1`, given a deadline, so that
// /api/health answers false for a database that hangs instead of hanging itself. Never throws.

/** How long a ping waits for `select 1` before answering false. */
export const PING_TIMEOUT_MS = 2000;

export async function probe(selectOne: () => Promise<unknown>, timeoutMs = PING_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    return await Promise.race([
      selectOne().then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
