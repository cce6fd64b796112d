export { CircuitBreaker } from './circuit-breaker';
export { CircuitBreakerRegistry } from './registry';
export type { CircuitBreakerRegistryOptions } from './registry';
export { CircuitBreakerConfigError, CircuitOpenError, isCircuitOpenError } from './errors';
export { DEFAULT_OPTIONS } from './options';
export type { CircuitBreakerOptions, IsFailure, ResolvedCircuitBreakerOptions } from './options';
export type {
  CircuitBreakerSnapshot,
  CircuitState,
  Clock,
  ExecuteOptions,
  StateChangeListener,
  Unsubscribe,
} from './types';
