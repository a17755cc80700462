import fs from 'node:fs';
import type { Page } from 'playwright-core';

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core (WCAG 2.x A and AA and best practices) on the page as it is: no serious or critical violation. */
export async function expectAccessible(page: Page): Promise<void> {
  // evaluated through the DevTools protocol, which the page's CSP (script-src 'none') does not govern
  await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(
    `axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
  )) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect([page.url(), serious]).toEqual([page.url(), []]);
}
