/** A child process's inspector (started with --inspect=127.0.0.1:PORT), over its WebSocket. */
import { Session } from 'node:inspector/promises';
import { WebSocket } from 'ws';

export interface InspectorSession {
  call<T = unknown>(method: string, params?: object): Promise<T>;
  on(method: string, listener: (params: Record<string, unknown>) => void): void;
  close(): void;
}

/** This process's own inspector, as an InspectorSession. */
export function ownInspector(): InspectorSession {
  const session = new Session();
  session.connect();
  return {
    call: async <T>(method: string, params: object = {}) => (await session.post(method, params)) as T,
    on: (method, listener) =>
      session.on(method, (m: { params: Record<string, unknown> }) => listener(m.params)),
    close: () => session.disconnect(),
  };
}

export async function connectInspector(port: number): Promise<InspectorSession> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as Array<{
    webSocketDebuggerUrl: string;
  }>;
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl, { maxPayload: 1 << 30 });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let id = 0;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  const listeners = new Map<string, Array<(params: Record<string, unknown>) => void>>();
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as {
      id?: number;
      method?: string;
      params?: Record<string, unknown>;
      result?: unknown;
      error?: { message: string };
    };
    if (m.method) for (const l of listeners.get(m.method) ?? []) l(m.params ?? {});
    else if (m.id !== undefined) {
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error) w?.reject(new Error(`inspector: ${m.error.message}`));
      else w?.resolve(m.result);
    }
  });
  return {
    call: <T>(method: string, params: object = {}) =>
      new Promise<T>((resolve, reject) => {
        const i = ++id;
        waiting.set(i, { resolve: resolve as (v: unknown) => void, reject });
        ws.send(JSON.stringify({ id: i, method, params }));
      }),
    on: (method, listener) => listeners.set(method, [...(listeners.get(method) ?? []), listener]),
    close: () => ws.close(),
  };
}
