/** Reading objects for a verb: whole lists page by page, and the namespace a kind is read in. */
import type { KindInfo } from '../client/api/kinds.js';
import type { KindName, KubeObject } from '../client/api/types.js';
import type { Client } from '../client/client.js';

export interface Selectors {
  labelSelector?: string;
  fieldSelector?: string;
}

const PAGE = 500;

/** Every matching object, read in pages of one consistent revision; and that revision. */
export async function listAll(
  client: Client,
  info: KindInfo,
  namespace: string,
  selectors: Selectors = {},
): Promise<{ items: KubeObject[]; resourceVersion: string }> {
  const items: KubeObject[] = [];
  let resourceVersion = '';
  let cont: string | undefined;
  do {
    const page = await client.list(info.kind as KindName, {
      namespace: info.namespaced ? namespace : '',
      labelSelector: selectors.labelSelector,
      fieldSelector: selectors.fieldSelector,
      limit: PAGE,
      continue: cont,
    });
    items.push(...page.items);
    resourceVersion = page.resourceVersion;
    cont = page.continue;
  } while (cont);
  return { items, resourceVersion };
}

/** The namespace a request for this kind carries: none for cluster-scoped kinds. */
export function namespaceFor(info: KindInfo, namespace: string): string {
  return info.namespaced ? namespace : '';
}

/** "in default namespace" wording of kubectl's empty-result message. */
export function noResourcesMessage(
  info: KindInfo | undefined,
  namespace: string,
  allNamespaces: boolean,
): string {
  if (!info?.namespaced || allNamespaces) return 'No resources found\n';
  return `No resources found in ${namespace} namespace.\n`;
}
