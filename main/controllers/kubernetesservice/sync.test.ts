/** default/kubernetes follows the port the API is served on. */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startTestApiServer, type TestApiServer } from '../../../test/support/apiserver.js';
import { silentLogger } from '../../logging.js';
import { syncKubernetesService } from './sync.js';

let t: TestApiServer;
beforeEach(async () => {
  t = await startTestApiServer();
});
afterEach(async () => t.close());

it('creates the Service, brings it to a new port, and leaves it alone when it is right', async () => {
  // The identity the control plane writes it as (controllers see only client/).
  const apiserver = t.as({ name: 'system:apiserver', role: 'admin' });
  await syncKubernetesService(apiserver, 6443, silentLogger());
  let svc = await t.admin.get('Service', 'kubernetes', { namespace: 'default' });
  expect(svc.metadata?.labels).toEqual({ component: 'apiserver', provider: 'kubernetes' });
  expect(svc.spec?.ports).toEqual([{ name: 'https', protocol: 'TCP', port: 6443, targetPort: 6443 }]);
  await syncKubernetesService(apiserver, 7443, silentLogger());
  svc = await t.admin.get('Service', 'kubernetes', { namespace: 'default' });
  expect(svc.spec?.ports?.[0].port).toBe(7443);
  const rv = svc.metadata?.resourceVersion;
  await syncKubernetesService(apiserver, 7443, silentLogger());
  expect(
    (await t.admin.get('Service', 'kubernetes', { namespace: 'default' })).metadata?.resourceVersion,
  ).toBe(rv);
});
