import { oneOf, type Template } from '../seeds';

/**
 * TEST DOUBLE support: KAlgebra's seeds for the scripted task-generator double: calculator, 2D/3D plot and answer templates with the `ans` plan the KAlgebra reference policy (reference.ts) replays, and tasks it has no plan for.
 */

const VARIABLES = ['p', 'q', 'r', 'v', 'w', 'total', 'area', 'result'] as const;
const VALUES = ['3^5+2', '7*8-5', 'root(144, 2)', '(2+3)*(4+5)', '2^10-1', 'log(100)/log(10)', '12/5+1', 'abs(-17)+3', 'factorial(6)', 'gcd(84, 36)'] as const;
const CURVES = ['x^2-3', 'x^3-2*x', 'sin(x)*2', 'cos(x)+x/2', 'x^2/4+1', 'abs(x)-2', 'exp(x/3)', 'ln(x^2+1)'] as const;
const SURFACES = ['x^2-y^2', 'sin(x)*cos(y)', 'x*y/4', '(x^2+y^2)/5', 'root(x^2+y^2, 2)'] as const;
const PRODUCTS: ReadonlyArray<readonly [number, number, number]> = [
  [12, 7, 5],
  [23, 4, 9],
  [15, 15, 1],
  [8, 9, 10],
  [31, 3, 2],
  [6, 17, 4],
  [14, 6, 8],
  [27, 5, 13],
  [9, 11, 7],
  [42, 3, 6],
  [18, 8, 20],
  [35, 7, 3],
  [13, 13, 13],
  [21, 9, 11],
  [16, 12, 5],
  [64, 2, 17],
];
/**
 * The library's KAlgebra tasks a local host runs whose plan shape (apps/policies.ts kindOf) the
 * templates below share, so that what a planner learns on generated tasks can carry over to them:
 * the evaluation tasks of the learning loop, its benchmarks and the small planner.
 */
export const LEARNABLE_TASKS = ['A-01', 'A-03', 'B-01', 'C-01', 'C-04', 'C-07', 'C-11', 'C-12', 'C-14', 'C-15', 'C-17', 'D-02'] as const;

const UNPLANNED = [
  'Change the resolution of the 2D plot to Very Fine in KAlgebra.',
  'Open the Dictionary tab of KAlgebra and look up the function gcd.',
  'Export the calculator log of KAlgebra to a file named log.html in the home folder.',
  'Switch the 3D plot style of KAlgebra to Dots.',
] as const;


export const SEEDS: readonly Template[] = [
  {
    write: (pick) => {
      const name = pick(VARIABLES);
      const value = pick(VALUES);
      return { instruction: `In the KAlgebra calculator, store the value of ${value} in a variable named ${name}.`, ans: `${name} := ${value}` };
    },
    read: (instruction) => {
      const m = new RegExp(`^In the KAlgebra calculator, store the value of ${oneOf(VALUES)} in a variable named ${oneOf(VARIABLES)}\\.$`).exec(instruction);
      return m === null ? undefined : { instruction, ans: `${m[2]} := ${m[1]}` };
    },
  },
  {
    write: (pick) => {
      const curve = pick(CURVES);
      return { instruction: `Plot the function y = ${curve} in KAlgebra's 2D Graph.`, ans: `x->${curve}` };
    },
    read: (instruction) => {
      const m = new RegExp(`^Plot the function y = ${oneOf(CURVES)} in KAlgebra's 2D Graph\\.$`).exec(instruction);
      return m === null ? undefined : { instruction, ans: `x->${m[1]}` };
    },
  },
  {
    write: (pick) => {
      const surface = pick(SURFACES);
      return { instruction: `Plot the surface z = ${surface} in KAlgebra's 3D Graph.`, ans: `(x, y)->${surface}` };
    },
    read: (instruction) => {
      const m = new RegExp(`^Plot the surface z = ${oneOf(SURFACES)} in KAlgebra's 3D Graph\\.$`).exec(instruction);
      return m === null ? undefined : { instruction, ans: `(x, y)->${m[1]}` };
    },
  },
  {
    write: (pick) => {
      const [a, b, c] = pick(PRODUCTS);
      return { instruction: `Use KAlgebra to compute ${a}*${b}+${c} and submit the result as your answer.`, ans: `${a}*${b}+${c}\nANS ${a * b + c}` };
    },
    read: (instruction) => {
      const m = /^Use KAlgebra to compute (\d+)\*(\d+)\+(\d+) and submit the result as your answer\.$/.exec(instruction);
      if (m === null) return undefined;
      const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
      return { instruction, ans: `${a}*${b}+${c}\nANS ${a * b + c}` };
    },
  },
  {
    write: (pick) => ({ instruction: pick(UNPLANNED) }),
    read: (instruction) => ((UNPLANNED as readonly string[]).includes(instruction) ? { instruction } : undefined),
  },
];
