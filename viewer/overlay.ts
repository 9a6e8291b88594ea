import { describeAction, type GuiAction, type ScrollDirection } from '../core/actions';
import { html, type Html } from './html';

/**
 * An action drawn over the screenshot it was decided on, as an SVG in the screen's own pixel space
 * (the space the action's coordinates live in), laid over the image at any displayed size: a ring
 * at a click (two for a double click, dashed for a hover), an arrow along a drag or in a scroll's
 * direction, a banner with typed text, a hotkey, or how the episode ended.
 */

const STROKE = '#e0245e';
const DIRECTIONS: Readonly<Record<ScrollDirection, readonly [number, number]>> = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] };

export function actionOverlay(action: GuiAction | null, screen: { readonly width: number; readonly height: number } | undefined): Html {
  const { width, height } = screen ?? { width: 1920, height: 1080 };
  // One unit is 1% of the larger side, so marks look the same on any screen size.
  const u = Math.max(width, height) / 100;
  const shapes = action === null ? html`` : shapesOf(action, u, width, height);
  // Without the screen size (older manifests) viewer.js takes the image's own size once it loads.
  return html`<svg class="overlay" data-action="${action?.type ?? 'none'}"${screen === undefined ? html` data-viewbox="auto"` : ''} viewBox="0 0 ${width} ${height}" preserveAspectRatio="none" aria-label="${action === null ? 'no action' : describeAction(action)}">${shapes}</svg>`;
}

function shapesOf(action: GuiAction, u: number, width: number, height: number): Html {
  const ring = (x: number, y: number, r: number, dashed = false) =>
    html`<circle cx="${x}" cy="${y}" r="${r}" fill="none" stroke="${STROKE}" stroke-width="${0.35 * u}"${dashed ? html` stroke-dasharray="${u} ${0.6 * u}"` : ''}/>`;
  const dot = (x: number, y: number) => html`<circle cx="${x}" cy="${y}" r="${0.35 * u}" fill="${STROKE}"/>`;
  const label = (x: number, y: number, text: string) =>
    html`<text x="${Math.min(x + 2.2 * u, width - 12 * u)}" y="${Math.max(y - 2.2 * u, 2 * u)}" font-size="${1.8 * u}" fill="${STROKE}" stroke="white" stroke-width="${0.4 * u}" paint-order="stroke" font-family="sans-serif" font-weight="bold">${text}</text>`;
  switch (action.type) {
    case 'click':
      return html`<g class="mark">${ring(action.x, action.y, 1.6 * u)}${dot(action.x, action.y)}${label(action.x, action.y, 'click')}</g>`;
    case 'double_click':
      return html`<g class="mark">${ring(action.x, action.y, 1.2 * u)}${ring(action.x, action.y, 2.1 * u)}${dot(action.x, action.y)}${label(action.x, action.y, 'double click')}</g>`;
    case 'right_click':
      return html`<g class="mark">${ring(action.x, action.y, 1.6 * u)}${dot(action.x, action.y)}${label(action.x, action.y, 'right click')}</g>`;
    case 'hover':
      return html`<g class="mark">${ring(action.x, action.y, 1.6 * u, true)}${label(action.x, action.y, 'hover')}</g>`;
    case 'drag':
      return html`<g class="mark">${ring(action.from.x, action.from.y, 1.2 * u)}${arrow(action.from.x, action.from.y, action.to.x, action.to.y, u)}${label(action.to.x, action.to.y, 'drag')}</g>`;
    case 'scroll': {
      // A scroll at the pointer that no desktop performed (so none recorded where) has no point to draw at.
      if (action.x === undefined || action.y === undefined) return banner(describeAction(action), u, width, height);
      const [dx, dy] = DIRECTIONS[action.direction];
      const length = 8 * u;
      return html`<g class="mark">${dot(action.x, action.y)}${arrow(action.x, action.y, action.x + dx * length, action.y + dy * length, u)}${label(action.x, action.y, `scroll ${action.direction} ×${action.amount}`)}</g>`;
    }
    default:
      // type, hotkey, wait and the stops: "type "p := 2" then Enter", "press ctrl+c", "done".
      return banner(describeAction(action), u, width, height);
  }
}

/** A line with a filled head at its end. */
function arrow(x1: number, y1: number, x2: number, y2: number, u: number): Html {
  const angle = Math.atan2(y2 - y1, x2 - x1);
  const head = 1.8 * u;
  const wing = (side: number) => [x2 - head * Math.cos(angle + side * 0.45), y2 - head * Math.sin(angle + side * 0.45)].map((v) => v.toFixed(1)).join(',');
  return html`<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="${STROKE}" stroke-width="${0.45 * u}"/><polygon points="${x2},${y2} ${wing(1)} ${wing(-1)}" fill="${STROKE}"/>`;
}

/** Text across the bottom of the screen, for actions that have no place on it. */
function banner(text: string, u: number, width: number, height: number): Html {
  const size = 2.2 * u;
  const shown = text.length > 90 ? `${text.slice(0, 89)}…` : text;
  const boxWidth = Math.min(width - 2 * u, shown.length * size * 0.62 + 2 * u);
  return html`<g class="mark banner"><rect x="${u}" y="${height - 5 * u}" width="${boxWidth}" height="${3.6 * u}" rx="${0.6 * u}" fill="${STROKE}" opacity="0.9"/><text x="${2 * u}" y="${height - 2.4 * u}" font-size="${size}" fill="white" font-family="monospace">${shown}</text></g>`;
}
