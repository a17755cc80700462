/** Starts the Express 5 hello world (the framework's floor) in its own pinned process. */
import { freePort } from '../../packages/common/test/support/throwaway';
import { startServer, waitReady, type ServerProcess } from '../server';
import type { Pinning } from '../system';

export interface FloorPeer {
  server: ServerProcess;
  origin: string;
  stop(): Promise<void>;
}

/** `appPrototypes`: the variant whose server makes requests with the app's prototypes (Attest's listeners). */
export async function startExpressFloor(pinning: Pinning, logDir: string, appPrototypes = false): Promise<FloorPeer> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const server = startServer(
    pinning,
    appPrototypes ? 'express-floor-app-prototypes' : 'express-floor',
    'bench/peers/express-floor-server.ts',
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PEER_PORT: String(port),
      PEER_APP_PROTOTYPES: appPrototypes ? '1' : '0',
    },
    logDir,
  );
  try {
    await waitReady(server, `${origin}/`);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return { server, origin, stop: () => server.stop() };
}
