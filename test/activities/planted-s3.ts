import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * TEST DOUBLE of an S3 bucket holding keys with `..` segments, which AWS S3 stores as any other key
 * while MinIO refuses them (XMinioInvalidResourceName): path-style ListObjectsV2 (one page),
 * GetObject and HeadObject over a fixed set of objects, any credentials accepted. Compared only
 * with what @aws-sdk/client-s3 parses, not with a real S3.
 */
export interface PlantedS3 {
  readonly endpoint: string;
  close(): Promise<void>;
}

const xml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export async function startPlantedS3(bucket: string, objects: Readonly<Record<string, string>>): Promise<PlantedS3> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://s3');
    // The SDK encodes each segment of a key and keeps the slashes; nothing normalizes `..` on the way.
    const [, name, ...rest] = (req.url ?? '/').split('?')[0]!.split('/');
    const key = rest.map(decodeURIComponent).join('/');
    if (name !== bucket) return void res.writeHead(404).end();
    if (url.searchParams.get('list-type') === '2') {
      const prefix = url.searchParams.get('prefix') ?? '';
      const keys = Object.keys(objects).filter((k) => k.startsWith(prefix)).sort();
      const contents = keys.map((k) => `<Contents><Key>${xml(k)}</Key><Size>${Buffer.byteLength(objects[k]!)}</Size></Contents>`).join('');
      res.writeHead(200, { 'content-type': 'application/xml' });
      return void res.end(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name><Prefix>${xml(prefix)}</Prefix><KeyCount>${keys.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${contents}</ListBucketResult>`);
    }
    const body = objects[key];
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'application/xml' });
      return void res.end(req.method === 'HEAD' ? undefined : `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>${xml(key)}</Key></Error>`);
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
