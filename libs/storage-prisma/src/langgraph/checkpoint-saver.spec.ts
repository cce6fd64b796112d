import { runPrismaSaverSpecs } from './checkpoint-saver-spec-cases';

runPrismaSaverSpecs('sqlite');
