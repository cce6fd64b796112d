import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PushDelivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** `X-Cognition-Signature` is the HMAC of the raw body with the receiver's secret. */
  signed: boolean;
}

export interface PushReceiver {
  url: string;
  deliveries: PushDelivery[];
  close(): Promise<void>;
}

/** A callback / push notification receiver on loopback that checks each request's signature. */
export async function startPushReceiver(secret: string): Promise<PushReceiver> {
  const deliveries: PushDelivery[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const expected = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
      deliveries.push({
        path: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(raw) as unknown,
        signed: req.headers['x-cognition-signature'] === expected,
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
