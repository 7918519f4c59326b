//! Energy-momentum methods: the Livens principle with Gonzalez discrete gradients.
