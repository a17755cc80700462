import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * passport-http 0.3.0 decoded Basic credentials with `new Buffer()`, which makes Node walk the stack on
 * each of a process's first 10,000 calls (patches/passport-http@0.3.0.patch). With --pending-deprecation
 * Node reports every such call, even from node_modules: the patched strategy must report none.
 */
test('the Basic strategy decodes credentials without the deprecated Buffer()', () => {
  const script = `
    const { BasicStrategy } = require('passport-http');
    const warnings = [];
    process.on('warning', (w) => warnings.push(w.code));
    const strategy = new BasicStrategy((id, secret, done) => done(null, { id, secret }));
    let user;
    strategy.success = (u) => (user = u);
    strategy.fail = (f) => { throw new Error('failed: ' + f); };
    strategy.authenticate({ headers: { authorization: 'Basic ' + Buffer.from('app_1:sk_2').toString('base64') } });
    setImmediate(() => process.stdout.write(JSON.stringify({ user, warnings })));
  `;
  const out = execFileSync(process.execPath, ['--pending-deprecation', '-e', script], {
    cwd: path.join(__dirname, '..'),
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
  expect(JSON.parse(out)).toEqual({ user: { id: 'app_1', secret: 'sk_2' }, warnings: [] });
});
