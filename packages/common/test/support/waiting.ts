/** Polls every 20 ms, for up to `ms`, until read() gives the expected value; returns the last one seen. */
export async function valueWithin<T>(ms: number, read: () => Promise<T>, expected: T): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (value !== expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    value = await read();
  }
  return value;
}

/** Waits (polling every 50 ms, without end) until the condition holds. */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 50));
}

/** Runs fn until it stops throwing, 200 ms apart, without end (the test's timeout ends it). */
export async function eventually(fn: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      return await fn();
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Retries a request until it answers something other than 503: until Redis answers this process again (ioredis reconnects with a backoff). */
export async function once503sEnd<R extends { status: number }>(send: () => Promise<R>): Promise<R> {
  for (;;) {
    const res = await send();
    if (res.status !== 503) return res;
    await new Promise((r) => setTimeout(r, 100));
  }
}
