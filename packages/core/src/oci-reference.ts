/**
 * The OCI / Docker image reference grammar (github.com/distribution/reference, `reference.go`):
 *
 *     reference   := name [ ":" tag ] [ "@" digest ]
 *     name        := [ domain "/" ] path-component { "/" path-component }   (at most 255 characters)
 *     domain      := host [ ":" port ]        host := domain-name | "[" IPv6 "]"
 *     path-comp.  := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
 *     tag         := [\w][\w.-]{0,127}
 *     digest      := algorithm ":" hex{32,}
 *
 * A reference that passes is safe to hand to a container runtime, to skopeo, and to print.
 */
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN_NAME = `${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*`;
const IPV6 = '\\[[a-fA-F0-9:]+\\]';
const DOMAIN = `(?:${DOMAIN_NAME}|${IPV6})(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const PATH = `${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';

const REFERENCE = new RegExp(`^((?:${DOMAIN}/)?${PATH})(?::(${TAG}))?(?:@(${DIGEST}))?$`);
const REPOSITORY_WITH_DOMAIN = new RegExp(`^${DOMAIN}/${PATH}$`);

/** Longest image name (without tag and digest) the grammar allows. */
export const MAX_IMAGE_NAME_LENGTH = 255;

/** Why `image` is not a valid image reference, or null when it is. The message never repeats the value. */
export function imageReferenceProblem(image: string): string | null {
  if (image.length === 0) return 'is empty: give an image reference such as ghcr.io/org/image:v1.0';
  if (/[\u0000-\u001f\u007f\s]/.test(image)) return 'holds white space or a control character: an image reference has none';
  const match = REFERENCE.exec(image);
  if (!match) {
    if (/[A-Z]/.test(image.split(/[:@]/)[0]!.split('/').slice(1).join('/'))) return 'is not a valid image reference: repository paths are lower-case';
    return 'is not a valid image reference (OCI grammar: [registry[:port]/]path[:tag][@algorithm:hex], path in lower-case letters, digits and . _ -)';
  }
  if (match[1]!.length > MAX_IMAGE_NAME_LENGTH) return `is not a valid image reference: the name is longer than ${MAX_IMAGE_NAME_LENGTH} characters`;
  return null;
}

/** Why `target` is not a `<registry>/<project>[/<path>]` to mirror into (`--mirror-to`), or null. */
export function mirrorTargetProblem(target: string): string | null {
  if (/[\u0000-\u001f\u007f\s]/.test(target)) return 'holds white space or a control character';
  if (!REPOSITORY_WITH_DOMAIN.test(target) || target.length > MAX_IMAGE_NAME_LENGTH) {
    return 'give <registry>[:port]/<project>, e.g. harbor.example.com/images-llm-d (a registry host, then lower-case path components of letters, digits and . _ -; no tag)';
  }
  return null;
}

/**
 * Every image reference a values file sets: each string `image:` value at any depth (container
 * lists, `routing.proxy.image`, `requester.image`, KServe's `template.containers[].image`), and
 * GAIE's `image: {hub, name, tag}` map joined as the chart joins it. Returns the key path of each
 * and why it is invalid, for issues with file, line and key.
 */
export function invalidImageReferences(values: unknown): { path: (string | number)[]; problem: string }[] {
  const out: { path: (string | number)[]; problem: string }[] = [];
  const walk = (node: unknown, path: (string | number)[], depth: number) => {
    if (depth > 64) return;
    if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, [...path, i], depth + 1));
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'image' && typeof value === 'string' && value !== '') {
        const problem = imageReferenceProblem(value);
        if (problem) out.push({ path: [...path, key], problem });
      } else if (key === 'image' && isMap(value) && typeof value.hub === 'string' && typeof value.name === 'string') {
        const tag = typeof value.tag === 'string' && value.tag ? `:${value.tag}` : '';
        const problem = imageReferenceProblem(`${value.hub}/${value.name}${tag}`);
        if (problem) out.push({ path: [...path, key], problem: problem.replace(/^is /, 'is (hub/name:tag) ') });
      } else {
        walk(value, [...path, key], depth + 1);
      }
    }
  };
  walk(values, [], 0);
  return out;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
