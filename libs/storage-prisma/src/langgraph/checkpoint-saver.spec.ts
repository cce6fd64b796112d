import { runPrismaSaverSpecs } from '../testing/checkpoint-saver-cases';

runPrismaSaverSpecs('sqlite');
