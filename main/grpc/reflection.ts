/**
 * gRPC server reflection (v1 and v1alpha) from the descriptors buf compiled
 * (proto/gen/reflection.json), so grpcurl, buf curl, Postman and friends can list and call
 * the API with real types. @grpc/reflection is not used: it re-packs everything into one file
 * per package without dependencies, which strict clients refuse.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import index from '../../proto/gen/reflection.json' with { type: 'json' };

interface ReflectionRequest {
  host?: string;
  file_by_filename?: string;
  file_containing_symbol?: string;
  file_containing_extension?: { containing_type?: string; extension_number?: number };
  all_extension_numbers_of_type?: string;
  list_services?: string;
  message_request?: string;
}

const files = new Map(
  index.files.map((f) => [f.name, { deps: f.dependencies, bytes: Buffer.from(f.descriptor, 'base64') }]),
);
const symbols = index.symbols as Record<string, string>;

/** The file and everything it imports, dependencies first. */
function withDependencies(name: string): Buffer[] {
  const out: Buffer[] = [];
  const seen = new Set<string>();
  const visit = (n: string) => {
    if (seen.has(n)) return;
    seen.add(n);
    const f = files.get(n);
    if (!f) return;
    for (const d of f.deps) visit(d);
    out.push(f.bytes);
  };
  visit(name);
  return out;
}

function answer(req: ReflectionRequest): Record<string, unknown> {
  const base = { valid_host: req.host ?? '', original_request: req };
  const notFound = (what: string) => ({
    ...base,
    error_response: { error_code: grpc.status.NOT_FOUND, error_message: `${what} not found` },
  });
  switch (req.message_request) {
    case 'list_services':
      return { ...base, list_services_response: { service: index.services.map((name) => ({ name })) } };
    case 'file_by_filename':
      return files.has(req.file_by_filename!)
        ? {
            ...base,
            file_descriptor_response: { file_descriptor_proto: withDependencies(req.file_by_filename!) },
          }
        : notFound(`file ${req.file_by_filename}`);
    case 'file_containing_symbol': {
      const symbol = (req.file_containing_symbol ?? '').replace(/^\./, '');
      const file = symbols[symbol];
      return file
        ? { ...base, file_descriptor_response: { file_descriptor_proto: withDependencies(file) } }
        : notFound(`symbol ${symbol}`);
    }
    case 'file_containing_extension':
      return notFound(
        `extension ${req.file_containing_extension?.extension_number} of ${req.file_containing_extension?.containing_type}`,
      );
    case 'all_extension_numbers_of_type':
      return symbols[req.all_extension_numbers_of_type ?? '']
        ? {
            ...base,
            all_extension_numbers_response: {
              base_type_name: req.all_extension_numbers_of_type,
              extension_number: [],
            },
          }
        : notFound(`type ${req.all_extension_numbers_of_type}`);
    default:
      return {
        ...base,
        error_response: {
          error_code: grpc.status.INVALID_ARGUMENT,
          error_message: 'the request names no reflection query',
        },
      };
  }
}

export function addReflection(server: grpc.Server): void {
  const require = createRequire(import.meta.url);
  const protoDir = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto');
  for (const version of ['v1', 'v1alpha']) {
    const def = protoLoader.loadSync(`grpc/reflection/${version}/reflection.proto`, {
      includeDirs: [protoDir],
      keepCase: true,
      oneofs: true,
      defaults: false,
    });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      grpc: { reflection: Record<string, { ServerReflection: grpc.ServiceClientConstructor }> };
    };
    const service = pkg.grpc.reflection[version].ServerReflection.service;
    server.addService(service, {
      ServerReflectionInfo: (call: grpc.ServerDuplexStream<ReflectionRequest, unknown>) => {
        call.on('data', (req: ReflectionRequest) => call.write(answer(req)));
        call.on('end', () => call.end());
        call.on('error', () => undefined);
      },
    });
  }
}
