import http from 'node:http';

/** GET `url` without keep-alive (each call its own connection, as through a fresh tunnel); resolves with the body. */
export function httpGet(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(body));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}
