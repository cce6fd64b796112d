import { runMessagePositionSpecs } from './message-positions-spec-cases';

runMessagePositionSpecs('sqlite');
