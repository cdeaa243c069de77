import * as pulumi from '@pulumi/pulumi';

/** What `dependsOn` accepts. */
export type DependsOn = pulumi.ResourceOptions['dependsOn'];

/**
 * Options of a component's child: parented to the component and ordered after `after`.
 *
 * Pulumi does not hand a component's own `dependsOn` on to its children; a child only waits for
 * it through its parent. The components pass it on explicitly (`inherited`), so every child's
 * dependencies are recorded in the state and visible in `render` output.
 *
 * @param parent the component
 * @param inherited the component's own `opts.dependsOn`
 * @param after resources this child waits for (undefined entries are skipped)
 * @param extra further options of the child (`deleteBeforeReplace`, `customTimeouts`, …)
 */
export function childOptions<T extends pulumi.CustomResourceOptions | pulumi.ComponentResourceOptions>(
  parent: pulumi.Resource,
  inherited: DependsOn,
  after: readonly DependsOn[] = [],
  extra?: T,
): T {
  const dependsOn = [inherited, ...after].filter((d): d is NonNullable<DependsOn> => d !== undefined);
  // `dependsOn` accepts nested arrays, Outputs and Promises of resources: the SDK flattens them.
  const base: pulumi.ResourceOptions = dependsOn.length > 0 ? { parent, dependsOn: dependsOn as pulumi.Input<pulumi.Resource>[] } : { parent };
  return pulumi.mergeOptions(base, extra ?? {}) as T;
}

/**
 * `value`, as an Output that resolves once every resource given is ready: a Helm chart
 * (`helm.v4.Chart`) once its rendered objects exist (awaited, unless the chart skips awaiting),
 * any other resource once it is registered. It carries a dependency on each of them.
 */
export function whenReady<T>(resources: readonly (pulumi.Resource | undefined)[], value: T): pulumi.Output<T> {
  const signals = resources
    .filter((r): r is pulumi.Resource => r !== undefined)
    .map((r) => ('resources' in r && pulumi.Output.isInstance((r as { resources: unknown }).resources) ? (r as unknown as { resources: pulumi.Output<unknown> }).resources : r.urn));
  return pulumi.all(signals).apply(() => value);
}
