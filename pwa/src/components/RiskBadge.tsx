import type { RiskLevel } from '../../../shared/messages/common.ts';

export function RiskBadge({ risk }: { risk: RiskLevel }) {
  return <span class={`risk risk-${risk}`}>{risk} risk</span>;
}
