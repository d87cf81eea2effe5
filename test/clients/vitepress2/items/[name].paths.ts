// The pages of the dynamic route items/[name].md.
export default {
  paths: () => [{ params: { name: 'alpha' } }],
}
