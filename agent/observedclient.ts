/**
 * The agent's client, reporting how each call went to its ControlPlaneContact: every loop's
 * calls tell, as they happen, whether the control plane is there — without each loop having
 * to say so. A watch also tells when its stream ends with an error (the control plane went
 * away under it). Errors still reach the caller unchanged, after the contact heard of them.
 */
import type { Client, Watch } from '../client/client.js';
import type { ControlPlaneContact } from './contact.js';

/** The calls that only set things up or tear them down, and say nothing about the control plane. */
const LOCAL_CALLS = new Set<PropertyKey>(['reconnect', 'close']);

export function observedClient(client: Client, contact: ControlPlaneContact): Client {
  const observe = <T>(call: () => Promise<T>): Promise<T> => {
    const since = contact.mark();
    return call().then(
      (value) => {
        contact.succeeded(since);
        return value;
      },
      (err: unknown) => {
        contact.observe(err, since);
        throw err;
      },
    );
  };
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (LOCAL_CALLS.has(prop)) return value.bind(target);
      if (prop === 'watch') {
        return (...args: Parameters<Client['watch']>) =>
          observe(() => target.watch(...args)).then((watch) => observedWatch(watch, contact));
      }
      return (...args: unknown[]) =>
        observe(() => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
    },
  });
}

function observedWatch<T>(watch: Watch<T>, contact: ControlPlaneContact): Watch<T> {
  return {
    stop: () => watch.stop(),
    async *[Symbol.asyncIterator]() {
      const since = contact.mark();
      try {
        yield* watch;
      } catch (err) {
        contact.observe(err, since);
        throw err;
      }
    },
  };
}
