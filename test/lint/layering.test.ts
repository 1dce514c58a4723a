/** The one-way layering (proto ← client ← main | agent | cli; renderer via the bridge) is a lint error to break. */
import { ESLint } from 'eslint';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const eslint = new ESLint({ cwd: root });

async function violations(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: join(root, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layering lint rule', () => {
  it.each([
    ['client/api/x.ts', "import '../../main/controlplane.js';"],
    ['client/x.ts', "import '../agent/agent.js';"],
    ['proto/x.ts', "import '../client/client.js';"],
    ['main/controllers/gc/x.ts', "import '../../apiserver/apiserver.js';"],
    ['main/controllers/gc/x.ts', "import '../../storage/sqlite.js';"],
    ['main/scheduler/x.ts', "import '../grpc/server.js';"],
    ['agent/x.ts', "import '../main/controlplane.js';"],
    ['cli/x.ts', "import '../agent/agent.js';"],
    ['renderer/src/x.ts', "import '../../main/controlplane.js';"],
  ])('forbids %s from importing upwards or sideways (%s)', async (file, source) => {
    expect(await violations(file, source)).toHaveLength(1);
  });

  it.each([
    ['client/api/x.ts', "import '../../proto/gen/kubelab/v1/api.js';"],
    ['main/apiserver/x.ts', "import '../../client/client.js';"],
    ['main/controllers/gc/x.ts', "import '../../../client/client.js';"],
    ['agent/x.ts', "import '../client/client.js';"],
  ])('allows %s to import downwards (%s)', async (file, source) => {
    expect(await violations(file, source)).toEqual([]);
  });
});
