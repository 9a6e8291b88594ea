// The viewer's only script: hands each chart's configuration to Chart.js (and draws the interval
// whiskers it has no built-in for), moves between the steps of a trajectory with the keyboard,
// sizes overlays of screens whose size the manifest lacks, and refreshes the live progress of a
// running workflow.
'use strict';

// Whiskers for the datasets that carry `intervals` (one {lower, upper} or null per point, in the
// y axis's unit): a vertical line with caps through each bar or point, in `intervalColor`.
const intervalWhiskers = {
  id: 'codaIntervals',
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    chart.data.datasets.forEach((dataset, i) => {
      if (!Array.isArray(dataset.intervals) || !chart.isDatasetVisible(i)) return;
      const meta = chart.getDatasetMeta(i);
      const y = chart.scales[meta.yAxisID];
      ctx.save();
      ctx.strokeStyle = dataset.intervalColor || '#333333';
      ctx.lineWidth = 1.5;
      meta.data.forEach((element, j) => {
        const interval = dataset.intervals[j];
        if (!interval) return;
        const top = y.getPixelForValue(interval.upper);
        const bottom = y.getPixelForValue(interval.lower);
        const cap = typeof element.width === 'number' ? Math.min(8, element.width / 4) : 5;
        ctx.beginPath();
        ctx.moveTo(element.x, top);
        ctx.lineTo(element.x, bottom);
        ctx.moveTo(element.x - cap, top);
        ctx.lineTo(element.x + cap, top);
        ctx.moveTo(element.x - cap, bottom);
        ctx.lineTo(element.x + cap, bottom);
        ctx.stroke();
      });
      ctx.restore();
    });
  },
};

function drawCharts() {
  if (typeof Chart === 'undefined') return;
  Chart.register(intervalWhiskers);
  for (const canvas of document.querySelectorAll('canvas[data-chart]')) {
    new Chart(canvas, JSON.parse(canvas.dataset.chart));
  }
}

function stepNavigation() {
  const steps = [...document.querySelectorAll('section.step')];
  if (steps.length === 0) return;
  const position = document.querySelector('#step-position b');
  const film = [...document.querySelectorAll('.filmstrip a')];
  let current = 0;
  const show = (index, scroll) => {
    current = Math.max(0, Math.min(steps.length - 1, index));
    const step = steps[current];
    steps.forEach((s, i) => s.classList.toggle('current', i === current));
    film.forEach((a) => a.classList.toggle('current', a.getAttribute('href') === `#${step.id}`));
    if (position) position.textContent = step.dataset.step;
    history.replaceState(null, '', `#${step.id}`);
    if (scroll) step.scrollIntoView({ block: 'start', behavior: 'instant' });
  };
  const fromHash = () => steps.findIndex((s) => `#${s.id}` === location.hash);
  const moves = { j: 1, n: 1, ArrowRight: 1, k: -1, p: -1, ArrowLeft: -1 };
  document.addEventListener('keydown', (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || event.target.closest('input, textarea, select')) return;
    if (event.key in moves) show(current + moves[event.key], true);
    else if (event.key === 'Home') show(0, true);
    else if (event.key === 'End') show(steps.length - 1, true);
    else return;
    event.preventDefault();
  });
  for (const button of document.querySelectorAll('[data-step-move]')) {
    button.addEventListener('click', () => show(current + Number(button.dataset.stepMove), true));
  }
  window.addEventListener('hashchange', () => fromHash() >= 0 && show(fromHash(), false));
  show(Math.max(0, fromHash()), fromHash() > 0);
}

function sizeOverlays() {
  for (const svg of document.querySelectorAll('svg[data-viewbox="auto"]')) {
    const img = svg.parentElement.querySelector('img');
    const fit = () => img.naturalWidth > 0 && svg.setAttribute('viewBox', `0 0 ${img.naturalWidth} ${img.naturalHeight}`);
    if (img.complete) fit();
    else img.addEventListener('load', fit);
  }
}

function liveProgress() {
  for (const box of document.querySelectorAll('[data-refresh]')) {
    const timer = setInterval(async () => {
      try {
        const response = await fetch(box.dataset.refresh, { cache: 'no-store' });
        if (!response.ok) return;
        box.innerHTML = await response.text();
        if (response.headers.get('x-run-closed')) {
          clearInterval(timer);
          location.reload();
        }
      } catch {
        // The viewer itself is unreachable for a moment: try again at the next tick.
      }
    }, 2000);
  }
}

document.addEventListener('DOMContentLoaded', () => {
  drawCharts();
  stepNavigation();
  sizeOverlays();
  liveProgress();
});
