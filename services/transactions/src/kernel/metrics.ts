import { Counter, type Registry } from 'prom-client';

/** A counter of the admin port's /metrics, registered by its owner's register() (not the global registry). */
export const counter = (name: string, help: string, labelNames: string[]) =>
  new Counter({ name, help, labelNames, registers: [] });

/** Registers each metric with the admin port's registry. */
export function registerAll(registry: Registry, metrics: Parameters<Registry['registerMetric']>[0][]): void {
  for (const metric of metrics) registry.registerMetric(metric);
}
