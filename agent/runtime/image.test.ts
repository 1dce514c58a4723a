import { describe, expect, it } from 'vitest';
import { containerName, detectImageCli, imageRunArgv } from './image.js';

const spec = {
  podUid: '0123456789abcdef',
  podKey: 'default/web',
  name: 'web',
  restartCount: 2,
  argv: [],
  env: { MODE: 'prod' },
  image: 'nginx:1.27',
};

describe('image containers', () => {
  it('name env values without putting them on the command line, and mount volumes with --volume', () => {
    const docker = { cli: 'docker', name: 'docker' as const };
    const argv = imageRunArgv(docker, {
      ...spec,
      env: { TOKEN: 's3cret', PATH: '/opt/bin' },
      mounts: [
        { source: '/var/lib/kubelab/volumes/u/config', target: '/etc/app', readOnly: true },
        { source: '/var/lib/kubelab/volumes/u/scratch', target: '/scratch', readOnly: false },
      ],
    });
    expect(argv.join(' ')).not.toContain('s3cret');
    expect(argv).toEqual(expect.arrayContaining(['--env', 'TOKEN', 'PATH=/opt/bin']));
    const volumes = argv.flatMap((a, i) => (argv[i - 1] === '--volume' ? [a] : []));
    expect(volumes).toEqual([
      '/var/lib/kubelab/volumes/u/config:/etc/app:ro',
      '/var/lib/kubelab/volumes/u/scratch:/scratch',
    ]);
  });

  it('run the image as Kubernetes would: command replaces the entrypoint, args the cmd', () => {
    const docker = { cli: 'docker', name: 'docker' as const };
    expect(imageRunArgv(docker, spec)).toEqual([
      'docker',
      'run',
      '--rm',
      '--name',
      'kubelab-01234567-web-2',
      '--network',
      'host',
      '--init',
      '--env',
      'MODE',
      '--label',
      'io.kubelab.pod-uid=0123456789abcdef',
      '--label',
      'io.kubelab.container=web',
      'nginx:1.27',
    ]);
    const withCommand = imageRunArgv(docker, {
      ...spec,
      command: ['/bin/sh', '-c'],
      args: ['echo hi'],
      workingDir: '/srv',
      limits: { milliCPU: 500, memoryBytes: 64 * 1024 * 1024 },
    });
    expect(withCommand.slice(8)).toEqual([
      '--env',
      'MODE',
      '--workdir',
      '/srv',
      '--cpus',
      '0.5',
      '--memory',
      '67108864b',
      '--label',
      'io.kubelab.pod-uid=0123456789abcdef',
      '--label',
      'io.kubelab.container=web',
      '--entrypoint',
      '/bin/sh',
      'nginx:1.27',
      '-c',
      'echo hi',
    ]);
    expect(imageRunArgv(docker, { ...spec, args: ['-g', 'daemon off;'] }).slice(-3)).toEqual([
      'nginx:1.27',
      '-g',
      'daemon off;',
    ]);
  });

  it('names containers so they can be found again', () => {
    expect(containerName({ podUid: 'abcdefgh-1234', name: 'a_b', restartCount: 0 })).toBe(
      'kubelab-abcdefgh-a_b-0',
    );
  });

  it('explains why no image runtime is usable', async () => {
    const found = await detectImageCli(['podman']);
    expect('error' in found && found.error).toMatch(
      /podman is not installed|podman is installed but its daemon does not answer/,
    );
  });
});
