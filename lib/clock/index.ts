/**
 * The source of "now". Domain functions take a Clock so that tests can decide
 * expiry without sleeping; production uses the system clock.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}
