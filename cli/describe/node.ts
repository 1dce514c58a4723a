/** `describe node`: kubectl's DescribeNode — conditions, addresses, capacity, system info, the pods on it and what they request. */
import { formatBytes, formatCPUMillis } from '../../client/api/quantity.js';
import {
  addInto,
  nodeAllocatable,
  podRequests,
  resourcesOf,
  zeroResources,
} from '../../client/api/resources.js';
import type { Lease, Node, Pod } from '../../client/api/types.js';
import { ageOf } from '../../client/print/age.js';
import { nodeRoles } from '../../client/print/columns/node.js';
import { taintText } from './common.js';
import { describeTime, type DescribeWriter } from './writer.js';

function percent(part: number, whole: number): string {
  return whole > 0 ? `${Math.trunc((part / whole) * 100)}%` : '0%';
}

/** The sum of the containers' limits (what kubectl's describe node shows as Limits). */
function limitsOf(pod: Pod): { cpu: number; memory: number } {
  const total = zeroResources();
  for (const c of pod.spec?.containers ?? []) addInto(total, resourcesOf(c.resources?.limits));
  return { cpu: total.milliCPU, memory: total.memory };
}

export function describeNode(
  w: DescribeWriter,
  node: Node,
  pods: Pod[],
  lease: Lease | undefined,
  now: number,
): void {
  const spec = node.spec ?? {};
  const status = node.status ?? {};
  const meta = node.metadata ?? {};
  w.field(0, 'Name', meta.name);
  w.field(0, 'Roles', nodeRoles(node));
  w.map(0, 'Labels', meta.labels);
  w.map(0, 'Annotations', meta.annotations, ': ');
  w.field(0, 'CreationTimestamp', describeTime(meta.creationTimestamp));
  w.list(0, 'Taints', (spec.taints ?? []).map(taintText));
  w.field(0, 'Unschedulable', spec.unschedulable ? 'true' : 'false');
  if (lease) {
    w.line(0, 'Lease:');
    w.field(1, 'HolderIdentity', lease.spec?.holderIdentity ?? '<unset>');
    w.field(1, 'AcquireTime', describeTime(lease.spec?.acquireTime));
    w.field(1, 'RenewTime', describeTime(lease.spec?.renewTime));
  }
  const conditions = status.conditions ?? [];
  if (conditions.length) {
    w.line(0, 'Conditions:');
    w.table(
      1,
      ['Type', 'Status', 'LastHeartbeatTime', 'LastTransitionTime', 'Reason', 'Message'],
      conditions.map((c) => [
        c.type ?? '',
        c.status ?? '',
        describeTime(c.lastHeartbeatTime),
        describeTime(c.lastTransitionTime),
        c.reason ?? '',
        c.message ?? '',
      ]),
    );
  }
  w.line(0, 'Addresses:');
  for (const a of status.addresses ?? []) w.field(1, a.type ?? '', a.address);
  for (const [label, list] of [
    ['Capacity', status.capacity],
    ['Allocatable', status.allocatable],
  ] as const) {
    w.line(0, `${label}:`);
    for (const [k, v] of Object.entries(list ?? {}).sort()) w.line(1, `${k}:`, v);
  }
  const info = status.nodeInfo ?? {};
  w.line(0, 'System Info:');
  w.field(1, 'Machine ID', info.machineID ?? '');
  w.field(1, 'System UUID', info.systemUUID ?? '');
  w.field(1, 'Boot ID', info.bootID ?? '');
  w.field(1, 'Kernel Version', info.kernelVersion ?? '');
  w.field(1, 'OS Image', info.osImage ?? '');
  w.field(1, 'Operating System', info.operatingSystem ?? '');
  w.field(1, 'Architecture', info.architecture ?? '');
  w.field(1, 'Agent Version', info.agentVersion ?? '');

  const { milliCPU: allocCpu, memory: allocMem } = nodeAllocatable(node);
  const active = pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
  w.line(0, 'Non-terminated Pods:', `(${active.length} in total)`);
  const totals = { cpuReq: 0, cpuLim: 0, memReq: 0, memLim: 0 };
  const rows = active.map((p) => {
    const req = podRequests(p);
    const lim = limitsOf(p);
    const cpuReq = Number(req.milliCPU);
    const memReq = Number(req.memory);
    totals.cpuReq += cpuReq;
    totals.memReq += memReq;
    totals.cpuLim += lim.cpu;
    totals.memLim += lim.memory;
    return [
      p.metadata?.namespace ?? '',
      p.metadata?.name ?? '',
      `${formatCPUMillis(cpuReq)} (${percent(cpuReq, allocCpu)})`,
      `${formatCPUMillis(lim.cpu)} (${percent(lim.cpu, allocCpu)})`,
      `${formatBytes(memReq)} (${percent(memReq, allocMem)})`,
      `${formatBytes(lim.memory)} (${percent(lim.memory, allocMem)})`,
      ageOf(p.metadata?.creationTimestamp, now),
    ];
  });
  if (rows.length) {
    w.table(
      1,
      ['Namespace', 'Name', 'CPU Requests', 'CPU Limits', 'Memory Requests', 'Memory Limits', 'Age'],
      rows,
    );
  }
  w.line(0, 'Allocated resources:');
  w.line(1, '(Total limits may be over 100 percent, i.e., overcommitted.)');
  w.table(
    1,
    ['Resource', 'Requests', 'Limits'],
    [
      [
        'cpu',
        `${formatCPUMillis(totals.cpuReq)} (${percent(totals.cpuReq, allocCpu)})`,
        `${formatCPUMillis(totals.cpuLim)} (${percent(totals.cpuLim, allocCpu)})`,
      ],
      [
        'memory',
        `${formatBytes(totals.memReq)} (${percent(totals.memReq, allocMem)})`,
        `${formatBytes(totals.memLim)} (${percent(totals.memLim, allocMem)})`,
      ],
    ],
  );
}
