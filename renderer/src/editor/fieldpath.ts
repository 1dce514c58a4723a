/**
 * Field paths as the API writes them in errors — `spec.template.spec.containers[0].image`,
 * `metadata.labels[app.kubernetes.io/name]` — split into their steps: names, list indexes and
 * map keys (a bracketed key may itself contain dots).
 */
export type PathStep = string | number;

export function parseFieldPath(path: string): PathStep[] {
  const steps: PathStep[] = [];
  let i = 0;
  let name = '';
  const endName = () => {
    if (name) steps.push(name);
    name = '';
  };
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      endName();
      i++;
    } else if (c === '[') {
      endName();
      const close = path.indexOf(']', i);
      const inside = close < 0 ? path.slice(i + 1) : path.slice(i + 1, close);
      steps.push(/^\d+$/.test(inside) ? Number(inside) : inside);
      i = close < 0 ? path.length : close + 1;
    } else {
      name += c;
      i++;
    }
  }
  endName();
  return steps;
}
