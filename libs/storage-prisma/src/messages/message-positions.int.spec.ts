import { runMessagePositionSpecs } from '../testing/message-positions-cases';

runMessagePositionSpecs('postgresql');
